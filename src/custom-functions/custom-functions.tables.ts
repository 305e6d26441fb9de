export interface CustomFunctionsTables {
  custom_functions: {
    id: string;
    organization_id: string;
    name: string;
    description: string;
    code: string;
    /** JSON text; '{}' when none was given. */
    input_schema: string;
    status: string;
    analysis_error_details: string | null;
    created_at: number;
    updated_at: number;
  };
}
